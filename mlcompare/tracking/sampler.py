"""System metrics on the suite's parent run, however short the suite.

MLflow's own monitor takes a sample, waits its interval, and logs only when the wait ends
with the run still going: a suite shorter than the interval (a one-second suite at 2 s)
is stopped during the first wait and logs nothing. This sampler uses MLflow's monitors
(CPU, memory, disk, network, GPU through nvidia-ml-py) and their metric names, but
logs one step every `interval_s` of the suite's wall time, and always one more when the
suite ends, covering the time since the last step. CPU utilisation is machine-wide
(psutil's, since the previous sample: the first step covers the time from the start);
memory, disk and network are their values at the moment of the sample.
"""

from __future__ import annotations

import logging
import threading

from mlflow.system_metrics.system_metrics_monitor import SystemMetricsMonitor

#: Seconds between two steps while the suite runs (MLflow's environment variable
#: MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL overrides it, as for MLflow's own monitor).
INTERVAL_S = 2.0

_logger = logging.getLogger(__name__)


class SuiteSampler(SystemMetricsMonitor):
    """MLflow's monitors sampled on a thread of their own; `finish` logs the last step."""

    def __init__(self, run_id: str, interval_s: float = INTERVAL_S) -> None:
        super().__init__(run_id, sampling_interval=interval_s, samples_before_logging=1)
        self._step_lock = threading.Lock()

    def start(self) -> None:
        import psutil

        psutil.cpu_percent()  # primes the machine-wide CPU figure: the first step covers start to step
        super().start()

    def monitor(self) -> None:
        """One step every interval until the suite ends (a failed write ends the sampling)."""
        while not self._shutdown_event.wait(self.sampling_interval):
            try:
                self._step()
            except Exception as exc:  # noqa: BLE001 - a sampler must never take the suite down
                _logger.warning("system metrics: sampling stopped: %s", exc)
                return

    def _step(self) -> None:
        with self._step_lock:
            self.collect_metrics()
            self.publish_metrics(self.aggregate_metrics())

    def finish(self) -> None:
        """Stop the thread, then log the step that covers the suite's last moments."""
        super().finish()
        try:
            self._step()
            self.mlflow_logger.flush()
        except Exception as exc:  # noqa: BLE001 - see monitor()
            _logger.warning("system metrics: the last sample could not be logged: %s", exc)

    @property
    def steps(self) -> int:
        """How many steps have been logged (or queued for logging) so far."""
        return self._logging_step
