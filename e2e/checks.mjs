// The counting every end-to-end driver shares: each check prints a line, and the run ends with
// "N passed, M failed" (the line CI reads) and exit status 1 unless all passed and one ran.
let passed = 0;
let failed = 0;

/** Runs one named check; a throw fails it with its first line, and the run goes on. */
export async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`  ok    ${name}`);
  } catch (e) {
    failed++;
    console.log(`  FAIL  ${name}: ${e && e.message ? e.message.split('\n')[0] : e}`);
  }
}

/** Prints the totals and exits. */
export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}
