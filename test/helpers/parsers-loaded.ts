// Vitest setup: every parser of src/collect/parts.ts loaded, as a run of any probe would load
// its own (loadParsers), so a test may call buildSnapshot on runs of any mode directly. What a
// command loads is held by test/ui/bin-lazy.test.ts, which runs the real bin.
import { loadAllParsers } from '../../src/collect/parts.js';

await loadAllParsers();
