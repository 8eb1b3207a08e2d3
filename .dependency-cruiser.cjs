/**
 * The rooms of src/ and which rooms each may import: the one place the layering is written
 * (README "Source layout" is drawn from it). `npm test` runs it (`npm run check:layers`);
 * a new cycle or an import against the direction fails the run.
 *
 * Data flows sources → parsers → model → trace/analysis → collect → output layers; imports
 * point the other way round the model: every room may use the ones listed after it.
 */
const BASE = ['text', 'net', 'errors.ts', 'paths.ts', 'flat-string.ts', 'cleanup.ts', 'run-record.ts', 'stack-trace.ts', 'shipped-yaml.ts'];

/** room → the rooms it may import besides itself (base helpers are open to all). */
const ROOMS = {
  // shared helpers: text (wrapping, widths, percent, JSON, clock, i18n table), addresses, errors, paths
  base: [],
  model: [],
  parsers: ['model'],
  sources: ['parsers', 'model'],
  analysis: ['parsers', 'model'],
  trace: ['analysis', 'parsers', 'model'],
  dns: ['sources', 'analysis', 'parsers', 'model'],
  collect: ['dns', 'sources', 'trace', 'analysis', 'parsers', 'model'],
  // the fleet opens one source per node (as collect does) and reads each node's bundle
  fleet: ['collect', 'dns', 'sources', 'trace', 'analysis', 'parsers', 'model'],
  tour: ['collect', 'trace', 'analysis', 'parsers', 'model'],
  ui: ['fleet', 'tour', 'collect', 'trace', 'analysis', 'parsers', 'model'],
  report: ['fleet', 'collect', 'trace', 'analysis', 'parsers', 'model'],
  dash: ['collect', 'trace', 'analysis', 'model'],
  // the command line's definitions (options, help, completion) and its printers' plumbing; not the UI
  cli: ['report', 'fleet', 'dns', 'collect', 'sources', 'trace', 'analysis', 'parsers', 'model'],
};

const esc = (s) => s.replace(/[.]/g, '\\.');
/** The path pattern of a room. */
function roomPath(room) {
  if (room === 'base') return `^src/(${BASE.map(esc).join('|')})($|/)`;
  return `^src/${room}/`;
}

const layerRules = Object.entries(ROOMS).map(([room, allowed]) => ({
  name: `layer-${room}`,
  comment: `${room} may import only ${[room, ...allowed, 'base'].join(', ')}`,
  severity: 'error',
  from: { path: roomPath(room) },
  to: { path: '^src/', pathNot: [room, ...allowed, 'base'].map(roomPath) },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'no import cycles, of files or of rooms', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    ...layerRules,
    {
      name: 'unplaced-file',
      comment: 'every file of src/ is in a room (or is the entry: main.ts, cli.tsx)',
      severity: 'error',
      from: { path: '^src/', pathNot: [...Object.keys(ROOMS).map(roomPath), '^src/(main\\.ts|cli\\.tsx)$'] },
      to: {},
    },
    {
      name: 'forced-gc-in-collect',
      comment: 'a forced GC is the collect layer\'s call (between parse stages), no one else\'s',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/collect/' },
      to: { path: '^src/collect/memory\\.ts$' },
    },
    {
      name: 'ink-react-only-in-ui',
      comment: 'only src/ui (and the entry that renders it) imports ink or react',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/ui/', '^src/cli\\.tsx$'] },
      to: { path: '(^|/)node_modules/(ink|react)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: ['^src/', 'node_modules/(ink|react)/'],
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.d.ts'] },
  },
};
