// The supervisor's own SIGINT/SIGTERM/exit kill every live tree; a second Ctrl-C forces.
import type { ProcessSupervisor } from '../process/index.js';

export interface ShutdownHooks {
  /** First signal: stop gracefully (the caller decides what "cancelled" means for its run). */
  onFirstSignal(signal: NodeJS.Signals): void;
  dispose(): void;
}

export function installShutdown(supervisor: ProcessSupervisor, onFirstSignal: (s: NodeJS.Signals) => void): ShutdownHooks {
  let signalled = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled++;
    if (signalled === 1) {
      onFirstSignal(signal);
      return;
    }
    // Second Ctrl-C (or TERM): no more grace.
    process.stderr.write(`supervisor: ${signal} again, killing every supervised process now\n`);
    supervisor.killAllSync();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const onExit = (): void => {
    supervisor.killAllSync();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('exit', onExit);
  return {
    onFirstSignal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onSignal);
      process.off('exit', onExit);
    },
  };
}
