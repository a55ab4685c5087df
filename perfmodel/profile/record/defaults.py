"""What `perfmodel record` samples by default, and how often.

Kept apart from `perfmodel.profile.record.setup` (which pulls in the JFR reader) so the CLI
can show the defaults without importing the recorder.

Why these: on a host the job keeps busy, every CPU-second a sampler takes is time the job
waits. The plugin's own sampler starts no flight recording in any JVM (JFR's start-up alone
costs each JVM 0.5–0.6 s of CPU), and every 50 ms it and py-spy take two fifths of the samples
they take every 20 ms. Sampled both ways in the same runs (`--jvm-sampler both`), the
plugin's samples every 50 ms moved no prediction of the 84 held-out local pairs by more than
0.34% and none of the cluster sort's 12 by more than 0.85% (docs/cluster.md); what they cost
on a busy host and with a spare core: docs/recording-overhead.md.
"""

from __future__ import annotations

DEFAULT_JVM_SAMPLER = "plugin"
"""The JVMs' task threads are sampled by the perfmodel plugin (TaskSampler.java)."""
PLUGIN_INTERVAL_MS = 50
"""The plugin's sampling period (and py-spy's with it), in milliseconds."""
JFR_INTERVAL_MS = 20
"""JFR's: its native-method samples go round-robin over every thread in native code, so a
task thread waiting on its Python worker needs a short period to be seen in tasks of 100 ms
(docs/recording-overhead.md)."""
DEFAULT_INTERVAL_MS = PLUGIN_INTERVAL_MS


def default_interval_ms(jvm_sampler: str) -> int:
    """The sampling period a recording with ``jvm_sampler`` takes when none is given: the
    plugin's own sampler every 50 ms, JFR (alone or with the plugin's, "both") every 20 ms."""
    return PLUGIN_INTERVAL_MS if jvm_sampler == "plugin" else JFR_INTERVAL_MS
