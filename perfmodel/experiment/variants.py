"""The same baseline run read the ways users have it: as a bare event log, and as a bundle
without code-inferred resource vectors.

A bundle from `perfmodel record` holds the event log, the measured CPU use of the
processes and (with samplers) stack samples. Most users have only the log; replaying the
bundle's own log (``perfmodel.load(eventlog)``) shows what the model does for them on the
very same run. Replaying the bundle with ``code_vectors=False`` shows what the code-inferred
vectors add. The validation study reports both beside the default reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from perfmodel.runs.store import RunStore

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis, Prediction
    from perfmodel.experiment.results import PairResult

BARE_LOG = "bare-log"
"""The bundle's event log alone replayed: no measured CPU use, no stack samples."""
NO_CODE_VECTORS = "no-code-vectors"
"""The bundle replayed with its unattributed time split by bytes moved, not by code."""
PLUGIN_SAMPLES = "plugin-samples"
"""A ``jvm_sampler = "both"`` run read from the plugin's samples instead of JFR's (only
where the bundle kept them): the samplers compared on identical runs."""
VARIANTS = (BARE_LOG, NO_CODE_VECTORS, PLUGIN_SAMPLES)
PLUGIN_VIEW_SUFFIX = ".plugin-samples"
"""The plugin-sample view of a bundle is written beside it, under its name plus this."""


def load_variants(bundle: str | Path, net_bw: float | None = None) -> dict[str, Analysis]:
    """The run of ``bundle`` read as a bare event log and as a bundle without code vectors
    (and from the plugin's samples where a "both" recording kept them), each compiled (a
    log without stages is refused here, as for the default reading). ``net_bw``: the run's
    per-host link in bytes/s where it was limited, as a user who knows it passes it
    (``--baseline-net-bw``)."""
    from perfmodel.analysis import load  # heavy import
    from perfmodel.profile.bundle import find_event_log, read_manifest
    from perfmodel.profile.record.bundle_write import with_plugin_samples
    from perfmodel.simulate.config import BaselineOverrides

    overrides = BaselineOverrides(net_bw=net_bw) if net_bw else None
    variants = {
        BARE_LOG: load(find_event_log(bundle), overrides=overrides),
        NO_CODE_VECTORS: load(bundle, code_vectors=False, overrides=overrides),
    }
    if read_manifest(bundle).sampling.get("plugin_samples"):
        view = Path(bundle).with_name(Path(bundle).name + PLUGIN_VIEW_SUFFIX)
        with_plugin_samples(Path(bundle), view)
        variants[PLUGIN_SAMPLES] = load(view, overrides=overrides)
    for analysis in variants.values():
        analysis.workload  # noqa: B018 - compiled now
    return variants


def record_variant(
    store: RunStore,
    pair: PairResult,
    method: str,
    prediction: Prediction,
    target_config_id: int,
    save: bool,
    version_id: int,
) -> None:
    """Put a variant's prediction of ``pair`` on it (and in the store, as method ``method``)."""
    error = abs(prediction.predicted_s - pair.measured_s) / pair.measured_s
    if method == BARE_LOG:
        pair.bare_log_s, pair.bare_log_error = prediction.predicted_s, error
    elif method == NO_CODE_VECTORS:
        pair.no_code_vectors_s, pair.no_code_vectors_error = prediction.predicted_s, error
    elif method == PLUGIN_SAMPLES:
        pair.plugin_samples_s, pair.plugin_samples_error = prediction.predicted_s, error
    else:
        raise ValueError(f"unknown variant {method!r}")
    if save:
        store.save_prediction(
            pair.baseline_run,
            target_config_id,
            version_id,
            prediction.predicted_s,
            prediction.baseline_replay_s,
            prediction.observed_s,
            prediction.bottleneck,
            {"measured_s": pair.measured_s, "target_runs": pair.target_runs, "variant": method},
        )
