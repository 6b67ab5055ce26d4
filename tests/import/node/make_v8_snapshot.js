// A V8 heap with a known shape, for the V8 importer's real-snapshot test. Reachable
// from globalThis.gcvmChain: 1000 GcvmChainNode objects in a linked list; from
// globalThis.gcvmFan: an array of 500 GcvmLeaf objects. 2000 GcvmGarbage objects
// are built and dropped: v8.writeHeapSnapshot() collects garbage first, so none of
// them may appear. Usage: node make_v8_snapshot.js OUT.heapsnapshot
'use strict';
const v8 = require('v8');

class GcvmChainNode { constructor(next) { this.next = next; } }
class GcvmLeaf { constructor(i) { this.value = i; } }
class GcvmGarbage { constructor(next) { this.next = next; } }

let chain = null;
for (let i = 0; i < 1000; ++i) chain = new GcvmChainNode(chain);
globalThis.gcvmChain = chain;
globalThis.gcvmFan = Array.from({length: 500}, (_, i) => new GcvmLeaf(i));
(function makeGarbage() {
  let garbage = null;
  for (let i = 0; i < 2000; ++i) garbage = new GcvmGarbage(garbage);
  return garbage !== null;
})();
const file = v8.writeHeapSnapshot(process.argv[2]);
console.log(file);
