import {
  rssOf,
  type ServiceProcess,
  type ServiceProcessOptions,
  startServiceProcess,
} from "./service-process.js";

/** Several processes of one server on the same ports: measured as one, and each on its own. */
export interface ProcessGroup extends ServiceProcess {
  /** Each process's RSS in bytes (/proc), in start order. */
  rssPerProcess(): number[];
}

/**
 * Starts `count` processes of a bench server (`opts.main`) on the same ports,
 * each with its own SO_REUSEPORT socket (bench/shared-listen.ts), as the
 * service runs one worker per core: a floor compared with the service then
 * has as many processes as the service has workers. CPU and RSS are summed
 * over them, like the service's over its primary and workers.
 */
export async function startProcessGroup(
  count: number,
  opts: ServiceProcessOptions,
): Promise<ProcessGroup> {
  const first = await startServiceProcess(opts);
  const processes = [first];
  try {
    for (let i = 1; i < count; i++) {
      processes.push(
        await startServiceProcess({
          ...opts,
          ports: { publicPort: first.publicPort, internalPort: first.internalPort },
        }),
      );
    }
  } catch (err) {
    await Promise.allSettled(processes.map((p) => p.stop()));
    throw err;
  }
  const sum = (of: (p: ServiceProcess) => number) =>
    processes.reduce((total, p) => total + of(p), 0);
  return {
    pid: first.pid,
    publicPort: first.publicPort,
    internalPort: first.internalPort,
    rssBytes: () => sum((p) => p.rssBytes()),
    cpuSeconds: () => sum((p) => p.cpuSeconds()),
    mainThreadCpuSeconds: () => sum((p) => p.mainThreadCpuSeconds()),
    rssPerProcess: () =>
      processes.map((p) => {
        try {
          return rssOf(p.pid);
        } catch {
          return 0;
        }
      }),
    async stop() {
      await Promise.allSettled(processes.map((p) => p.stop()));
    },
  };
}
