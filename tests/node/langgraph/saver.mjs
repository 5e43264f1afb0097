// The checkpointer the validation suites test: a SessionkitSaver on a store
// of its own (a fresh home and project per checkpointer: `list` without a
// thread lists the whole store, which must hold that suite's threads only).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SessionkitSaver } from 'sessionkit/langgraph';

const dirs = new Map();

export const checkpointerName = 'sessionkit';

export async function createCheckpointer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionkit-lg-'));
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const saver = new SessionkitSaver({ project, home: path.join(dir, 'home'), durability: 'never' });
  dirs.set(saver, dir);
  return saver;
}

export async function destroyCheckpointer(saver) {
  await saver.close();
  fs.rmSync(dirs.get(saver), { recursive: true, force: true });
  dirs.delete(saver);
}
