// Fails CI when any test was skipped: on CI every lab prerequisite is installed,
// so a skip means a test silently did not run.
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const skipped = [];
for (const file of report.testResults ?? []) {
  for (const t of file.assertionResults ?? []) {
    if (t.status !== 'passed' && t.status !== 'failed') skipped.push(`${file.name}: ${t.fullName} (${t.status})`);
  }
}
if (report.numTotalTests === 0) {
  console.error('no test ran');
  process.exit(1);
}
if (skipped.length) {
  console.error(`${skipped.length} test(s) skipped on CI, where nothing may be skipped:`);
  for (const s of skipped) console.error('  ' + s);
  process.exit(1);
}
console.log(`ci: ${report.numPassedTests} passed, ${report.numFailedTests} failed, 0 skipped`);
