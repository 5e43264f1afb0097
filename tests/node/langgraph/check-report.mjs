// Reads vitest's JSON report of tests/node/langgraph and fails unless each
// spec file ran exactly the tests expected and every one passed: a suite
// that failed to load, lost tests or skipped some must not pass quietly.
import fs from 'node:fs';
import path from 'node:path';

const [reportPath] = process.argv.slice(2);
const expected = {
  'validation.spec.mjs': 718,
  'delta-history.spec.mjs': 8,
};

const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const problems = [];
const seen = new Set();
for (const file of report.testResults) {
  const name = path.basename(file.name);
  seen.add(name);
  const want = expected[name];
  if (want === undefined) {
    problems.push(`${name}: a spec file the check does not know (add it to check-report.mjs)`);
    continue;
  }
  const states = {};
  for (const t of file.assertionResults) states[t.status] = (states[t.status] ?? 0) + 1;
  const passed = states.passed ?? 0;
  const total = file.assertionResults.length;
  if (file.status !== 'passed' || passed !== want || total !== want) {
    problems.push(`${name}: ${passed} of ${want} tests passed (${total} ran: ${JSON.stringify(states)}; file ${file.status}${file.message ? `: ${file.message}` : ''})`);
    for (const t of file.assertionResults) {
      if (t.status !== 'passed') problems.push(`  ${t.status}: ${t.fullName}`);
    }
  } else {
    console.log(`ok: ${name}: ${passed} of ${want} tests passed`);
  }
}
for (const name of Object.keys(expected)) {
  if (!seen.has(name)) problems.push(`${name}: not in the report (did not run)`);
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
