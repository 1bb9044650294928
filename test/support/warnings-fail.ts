// Loaded into every test process (`node --import`): a runtime warning
// (deprecation, experimental feature, listener leak...) is a defect, so the
// test file that caused it fails. Node still prints the warning itself; this
// only says where it must be fixed (the cause, never by silencing it).
process.on("warning", (warning: Error & { code?: string }) => {
  process.exitCode = 1;
  process.stderr.write(
    `A runtime warning is a defect; fix its cause: ${warning.name} ${warning.code ?? ""} ${warning.message}\n`,
  );
});
