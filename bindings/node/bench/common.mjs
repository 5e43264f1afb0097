// What the Node benches share: the messages core/examples/same_work.rs makes
// too, timing, and the Rust side of the same work.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..', '..');
export const MIB = 1 << 20;
export const ITEM_BYTES = 4000;

/** The message core/examples/same_work.rs makes too. */
export function message(i, size = ITEM_BYTES) {
  const head = `${i} `;
  return { role: i % 2 === 0 ? 'user' : 'assistant', content: head + 'x'.repeat(size - head.length) };
}

export const now = () => performance.now();
export async function timed(f) {
  const t = now();
  await f();
  return now() - t;
}
export const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(repo, 'target');

/** Build core/examples/same_work.rs in release. */
export function buildRust() {
  execFileSync('cargo', ['build', '--release', '--locked', '-q', '-p', 'sessionkit', '--example', 'same_work'], {
    cwd: repo,
    stdio: 'inherit',
  });
}

/** The Rust side of the same work: `{ ms, first }` (the median of its runs,
 *  and, for a resume, its first run, whose memory is fresh from the kernel). */
export function rust(...args) {
  return JSON.parse(execFileSync(path.join(target, 'release', 'examples', 'same_work'), args, { encoding: 'utf8' }));
}
