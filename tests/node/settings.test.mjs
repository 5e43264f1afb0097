// Settings, instruction files and memory through the Node package: the same
// calls as the core (docs/SETTINGS.md), plain objects out, errors with the
// core's codes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ErrorCode } from 'sessionkit';

import { fixtures, freshStore } from './helpers.mjs';

const rejects = (p, code, pattern) =>
  assert.rejects(p, (e) => {
    assert.equal(e.code, code, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });

test('effective values come with their source, and a key can be removed', async () => {
  const { store, project } = await freshStore();
  await store.setSetting('user', 'model', 'small');
  await store.setSetting('user', 'theme', 'dark');
  const written = await store.setSetting('project', 'model', 'large');
  assert.equal(written.path, path.join(fs.realpathSync(project), '.sessionkit', 'settings.json'));
  assert.equal(written.existed, false);

  let s = await store.settings();
  assert.deepEqual(s.values, { model: 'large', theme: 'dark' });
  assert.deepEqual(s.origins, { model: 'project', theme: 'user' });
  assert.deepEqual(
    s.sources.map((r) => [r.source, r.status]),
    [['user', 'loaded'], ['project', 'loaded'], ['local', 'missing'], ['host', 'skipped']],
  );
  assert.equal((await store.settings({ sources: ['user'] })).values.model, 'small');
  s = await store.settings({ overrides: { model: 'host' } });
  assert.deepEqual([s.values.model, s.origins.model], ['host', 'host']);

  // null is written as it is: it removes the key from the sources below.
  await store.setSetting('local', 'model', null);
  s = await store.settings();
  assert.deepEqual(s.values, { theme: 'dark' });
  assert.equal((await store.unsetSetting('local', 'model')).existed, true);
  assert.equal((await store.unsetSetting('local', 'model')).existed, false);
  assert.equal((await store.settings()).values.model, 'large');

  await rejects(store.setSetting('team', 'model', 1), ErrorCode.INVALID_INPUT, /team/);
  await rejects(store.setSetting('host', 'model', 1), ErrorCode.INVALID_INPUT, /never written/);
  await rejects(store.setSetting('user', 'model', undefined), ErrorCode.INVALID_INPUT, /value/);
  await rejects(store.settings({ sources: ['nope'] }), ErrorCode.INVALID_INPUT);
  await rejects(store.settings({ nope: 1 }), ErrorCode.INVALID_INPUT, /nope/);
});

test('a malformed file is reported with file, line and column; the others load', async () => {
  const { store, project } = await freshStore();
  await store.setSetting('project', 'theme', 'dark');
  const local = path.join(project, '.sessionkit', 'settings.local.json');
  fs.writeFileSync(local, '{\n  "a": ]\n}');
  const s = await store.settings();
  assert.deepEqual(s.values, { theme: 'dark' });
  const report = s.sources[2];
  assert.equal(report.status, 'error');
  assert.match(report.error, /settings\.local\.json: line 2, column 8/);
  await rejects(store.setSetting('local', 'a', 1), ErrorCode.CORRUPT, /line 2, column 8/);
  assert.equal(fs.readFileSync(local, 'utf8'), '{\n  "a": ]\n}');
});

test('an older file is migrated on its first write, its original kept as a backup', async () => {
  const { store, home } = await freshStore();
  const user = path.join(home, 'settings.json');
  const original = fs.readFileSync(path.join(fixtures, 'settings', 'v1.json'));
  fs.writeFileSync(user, original);
  let s = await store.settings();
  assert.deepEqual(s.values.instructions, { names: ['AGENTS.md', 'TEAM.md'], maxIncludeDepth: 3 });
  assert.equal(s.sources[0].version, 1);
  assert.equal(s.sources[0].migrations.length, 2);
  assert.deepEqual(fs.readFileSync(user), original, 'reading wrote');

  const w = await store.setSetting('user', 'model', 'x');
  assert.equal(w.backup, `${user}.v1.bak`);
  assert.deepEqual(fs.readFileSync(w.backup), original);
  const now = JSON.parse(fs.readFileSync(user, 'utf8'));
  assert.equal(now.schemaVersion, 3);
  assert.deepEqual(now.instructions.names, ['AGENTS.md', 'TEAM.md']);
  assert.equal(now.model, 'x');
  // The next write finds the current shape: no second backup.
  assert.equal((await store.setSetting('user', 'model', 'y')).backup, null);
  s = await store.settings();
  assert.deepEqual([s.sources[0].version, s.sources[0].migrations], [3, []]);
});

test('migrateSettings rewrites an older file once, and never a newer one', async () => {
  const { store, home } = await freshStore();
  const user = path.join(home, 'settings.json');
  const original = fs.readFileSync(path.join(fixtures, 'settings', 'v1.json'));
  fs.writeFileSync(user, original);
  const w = await store.migrateSettings('user');
  assert.equal(w.backup, `${user}.v1.bak`);
  assert.deepEqual(fs.readFileSync(w.backup), original);
  assert.equal(JSON.parse(fs.readFileSync(user, 'utf8')).schemaVersion, 3);
  assert.equal((await store.migrateSettings('user')).backup, null);
  const future = fs.readFileSync(path.join(fixtures, 'settings', 'v99.json'));
  fs.writeFileSync(user, future);
  await rejects(store.migrateSettings('user'), ErrorCode.UNSUPPORTED);
  assert.deepEqual(fs.readFileSync(user), future);
  await rejects(store.migrateSettings('host'), ErrorCode.INVALID_INPUT, /host/);
});

test('a file of a newer version is read-only, with a warning', async () => {
  const { store, project } = await freshStore();
  const dir = path.join(project, '.sessionkit');
  fs.mkdirSync(dir);
  const file = path.join(dir, 'settings.json');
  const original = fs.readFileSync(path.join(fixtures, 'settings', 'v99.json'));
  fs.writeFileSync(file, original);
  const s = await store.settings();
  assert.equal(s.values.model, 'from-the-future');
  assert.equal(s.sources[1].readOnly, true);
  assert.match(s.sources[1].warning, /schema version 99.*never rewritten/);
  await rejects(store.setSetting('project', 'model', 'x'), ErrorCode.UNSUPPORTED, /99/);
  assert.deepEqual(fs.readFileSync(file), original);
});

test('instruction files apply in order, with includes, and a cycle is reported', async () => {
  const { store, home, project } = await freshStore();
  const root = fs.realpathSync(project);
  fs.mkdirSync(path.join(root, '.git'));
  fs.mkdirSync(path.join(root, 'sub'));
  fs.writeFileSync(path.join(home, 'AGENTS.md'), 'Mine.');
  fs.writeFileSync(path.join(root, 'AGENTS.md'), 'Be brief. @docs/style.md');
  fs.mkdirSync(path.join(root, 'docs'));
  fs.writeFileSync(path.join(root, 'docs', 'style.md'), 'Style. @../AGENTS.md');
  fs.writeFileSync(path.join(root, 'sub', 'CLAUDE.md'), 'In sub.');
  fs.writeFileSync(path.join(root, 'sub', 'TEAM.md'), 'Team.');

  const got = await store.instructions(path.join(root, 'sub'));
  assert.deepEqual(got.names, ['AGENTS.md', 'CLAUDE.md']);
  assert.equal(got.root, root);
  assert.deepEqual(
    got.files.map((f) => [f.path, f.level, f.depth, f.content]),
    [
      [path.join(fs.realpathSync(home), 'AGENTS.md'), 'user', 0, 'Mine.'],
      [path.join(root, 'AGENTS.md'), 'project', 0, 'Be brief. @docs/style.md'],
      [path.join(root, 'docs', 'style.md'), 'include', 1, 'Style. @../AGENTS.md'],
      [path.join(root, 'sub', 'CLAUDE.md'), 'project', 0, 'In sub.'],
    ],
  );
  assert.equal(got.files[2].includedFrom, path.join(root, 'AGENTS.md'));
  // The path as the include names it (`docs/../AGENTS.md`).
  assert.deepEqual(
    got.problems.map((p) => [p.kind, path.resolve(p.path), p.includedFrom]),
    [['cycle', path.join(root, 'AGENTS.md'), path.join(root, 'docs', 'style.md')]],
  );

  // The recognised names are the call's, else the settings'.
  const team = await store.instructions(path.join(root, 'sub'), { names: ['TEAM.md'] });
  assert.deepEqual(team.files.map((f) => f.content), ['Team.']);
  await store.setSetting('project', 'instructions.names', ['CLAUDE.md']);
  const claude = await store.instructions(path.join(root, 'sub'));
  assert.deepEqual(claude.files.map((f) => f.content), ['In sub.']);
  const shallow = await store.instructions(root, { names: ['AGENTS.md'], maxIncludeDepth: 0 });
  assert.deepEqual(shallow.problems.map((p) => p.kind), ['depthLimit']);

  await rejects(store.instructions(path.join(root, 'missing')), ErrorCode.NOT_FOUND, /missing/);
  await rejects(store.instructions(root, { names: 'AGENTS.md' }), ErrorCode.INVALID_INPUT);
});

test('memory: add, update, list, read, delete; a hostile name is refused', async () => {
  const { store, home } = await freshStore();
  const entry = await store.addMemory('build', '# Build\nRun make.');
  assert.equal(entry.name, 'build');
  assert.equal(entry.summary, 'Build');
  assert.equal(entry.bytes, 17);
  assert.ok(fs.existsSync(entry.path));
  await rejects(store.addMemory('build', 'again'), ErrorCode.CONFLICT, /build/);
  assert.equal((await store.updateMemory('build', 'Run cargo.')).summary, 'Run cargo.');
  assert.equal(await store.readMemory('build'), 'Run cargo.');
  await rejects(store.updateMemory('nothing', 'x'), ErrorCode.NOT_FOUND, /nothing/);

  await store.addMemory('me', 'Short answers.', { scope: 'user' });
  assert.deepEqual((await store.listMemories()).map((m) => m.name), ['build']);
  assert.deepEqual((await store.listMemories({ scope: 'user' })).map((m) => m.name), ['me']);
  assert.equal(await store.readMemory('me', { scope: 'user' }), 'Short answers.');
  const index = fs.readFileSync(path.join(path.dirname(entry.path), 'MEMORY.md'), 'utf8');
  assert.match(index, /^- \[build\]\(build\.md\): Run cargo\.$/m);

  const before = fs.readdirSync(home, { recursive: true }).sort();
  for (const bad of ['../escape', '../../escape', '/etc/passwd', 'a/b', 'a\0b', '..', 'MEMORY']) {
    await rejects(store.addMemory(bad, 'x'), ErrorCode.INVALID_INPUT, /memory name/);
    await rejects(store.readMemory(bad, { scope: 'user' }), ErrorCode.INVALID_INPUT, /memory name/);
  }
  assert.deepEqual(fs.readdirSync(home, { recursive: true }).sort(), before);
  await rejects(store.listMemories({ scope: 'team' }), ErrorCode.INVALID_INPUT, /team/);
  await rejects(store.addMemory('x', 42), ErrorCode.INVALID_INPUT, /content/);

  await store.deleteMemory('build');
  await rejects(store.readMemory('build'), ErrorCode.NOT_FOUND, /build/);
  await rejects(store.deleteMemory('build'), ErrorCode.NOT_FOUND, /build/);
  assert.deepEqual(await store.listMemories(), []);
});
