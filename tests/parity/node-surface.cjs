// Prints the Node package's surface as JSON for tests/parity/parity.py: for
// each exported class, its methods and getters with the count of parameters
// before the first one with a default (Function.length), and the module's
// own functions.
'use strict';
const pkg = require(process.argv[2]);
const out = { classes: {}, functions: {} };
for (const [name, value] of Object.entries(pkg)) {
  if (typeof value !== 'function') continue;
  if (/^[A-Z]/.test(name) && value.prototype) {
    const members = {};
    for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(value.prototype))) {
      if (key === 'constructor') continue;
      members[key] = typeof d.value === 'function' ? d.value.length : 'get';
    }
    for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
      if (typeof d.value === 'function' && !['length', 'name', 'prototype'].includes(key)) {
        members[`static ${key}`] = d.value.length;
      }
    }
    out.classes[name] = members;
  } else {
    out.functions[name] = value.length;
  }
}
process.stdout.write(JSON.stringify(out));
