#!/usr/bin/python3
"""Compares the bundled configs (models/*.json) with the published ones.

  published_configs.py MODELS_DIR

For each bundled model: every field listed below must have the published
value, and every field of the published config must either be in the
bundled one or be listed as left out (with why). Each value names its
source; where the published file itself could not be read, the source says
what was read instead. Prints one line per field compared and exits 1 on any
mismatch.

Sources:
  HUB_FNET_LARGE  https://huggingface.co/google/fnet-large/blob/main/config.json
                  (the published file, read in full)
  HUB_FNET_BASE   the google/fnet-base config as copied into fine-tuned
                  repositories that name it (`"_name_or_path":
                  "google/fnet-base"`, e.g.
                  https://huggingface.co/kizunasunhy/fnet-base-finetuned-ner/blob/main/config.json);
                  fine-tuning does not change these fields. The file at
                  https://huggingface.co/google/fnet-base/blob/main/config.json
                  was not read itself.
  FNET_PAPER_RUN  the FNet figures of the published experiments seam
                  reproduces (hidden 768/1024, layers 12/24, intermediate
                  3072/4096, max_seq 512, vocab 32000).
  ISSUE_40        the Hub config of black-forest-labs/FLUX.2-klein-4B
                  (transformer/config.json) as quoted in issue 40:
                  rope_theta 2000.
  DIFFUSERS_FLUX2 the defaults of diffusers' Flux2Transformer2DModel
                  (https://huggingface.co/docs/diffusers/api/models/flux2_transformer):
                  rope_theta 2000, mlp_ratio 3.0, eps 1e-06,
                  attention_head_dim 128. Used only where the klein-4B file
                  does not override the default; not checked against it.
  FLUX2_RUN       the FLUX.2-klein-4B model of the published Neuron
                  experiments: 5 double-stream and 20 single-stream blocks,
                  24 heads of 128, hidden 3072, bf16, 256 image and 512 text
                  tokens (512x512 image).
Not compared: models/hyena.json is not a published config (its _source says
so: a HyenaDNA-style config with an explicit filter); the test checks that
its _source says it.
"""
import json
import os
import sys

FLUX2 = {
    "rope_theta": (2000, "ISSUE_40"),
    "num_layers": (5, "FLUX2_RUN"),
    "num_single_layers": (20, "FLUX2_RUN"),
    "num_attention_heads": (24, "FLUX2_RUN"),
    "attention_head_dim": (128, "FLUX2_RUN, DIFFUSERS_FLUX2"),
    "hidden_size": (3072, "FLUX2_RUN (diffusers derives it: heads * head_dim)"),
    "mlp_ratio": (3.0, "DIFFUSERS_FLUX2 (class default)"),
    "eps": (1e-06, "DIFFUSERS_FLUX2 (class default)"),
    "_class_name": ("Flux2Transformer2DModel", "DIFFUSERS_FLUX2"),
    "torch_dtype": ("bfloat16", "FLUX2_RUN (bf16)"),
    "img_seq": (256, "FLUX2_RUN (512x512 image; not a Hub field)"),
    "txt_seq": (512, "FLUX2_RUN (not a Hub field)"),
}

_FNET_COMMON = {
    "architectures": (["FNetForPreTraining"], None),
    "model_type": ("fnet", None),
    "vocab_size": (32000, None),
    "hidden_act": ("gelu_new", None),
    "hidden_dropout_prob": (0.1, None),
    "max_position_embeddings": (512, None),
    "type_vocab_size": (4, None),
    "initializer_range": (0.02, None),
    "layer_norm_eps": (1e-12, None),
    "use_tpu_fourier_optimizations": (False, None),
    "tpu_short_seq_length": (512, None),
    "pad_token_id": (3, None),
    "bos_token_id": (1, None),
    "eos_token_id": (2, None),
    "torch_dtype": ("float32", None),
}


def fnet(source, hidden, layers, intermediate):
    fields = {k: (v, source) for k, (v, _) in _FNET_COMMON.items()}
    fields.update({
        "hidden_size": (hidden, source + ", FNET_PAPER_RUN"),
        "num_hidden_layers": (layers, source + ", FNET_PAPER_RUN"),
        "intermediate_size": (intermediate, source + ", FNET_PAPER_RUN"),
    })
    return fields


# Fields of the published file the bundled one leaves out, and why.
FNET_LEFT_OUT = {
    "actual_seq_length": "the original checkpoint's training length; --seq sets it",
    "use_fft": "the original implementation's switch (FFT vs DFT matrices); seam's mix is the DFT",
    "use_latest": "the original implementation's switch; no effect on the model",
    "transformers_version": "metadata",
}

# Fields of a bundled config that are seam's own, not the published file's.
SEAM_OWN = {
    "flux2-klein": {
        "model_type": "seam's model kind (diffusers names the class: _class_name)",
        "initializer_range": "seam's random weights (the Hub has weights, not an init)",
    },
}

PUBLISHED = {
    "flux2-klein": (FLUX2, {}),
    "fnet-base": (fnet("HUB_FNET_BASE", 768, 12, 3072), FNET_LEFT_OUT),
    "fnet-large": (fnet("HUB_FNET_LARGE", 1024, 24, 4096), FNET_LEFT_OUT),
}


def main(models):
    bad = 0
    for name, (fields, left_out) in PUBLISHED.items():
        with open(os.path.join(models, name + ".json")) as f:
            bundled = json.load(f)
        for field, (want, source) in fields.items():
            got = bundled.get(field, "<missing>")
            ok = got == want
            bad += not ok
            print("%s %s.%s = %r (published %r; %s)" %
                  ("ok  " if ok else "DIFF", name, field, got, want, source))
        for field, why in left_out.items():
            if field in bundled:
                print("DIFF %s.%s is listed as left out but present" % (name, field))
                bad += 1
            else:
                print("left out %s.%s: %s" % (name, field, why))
        # Every bundled field is either compared or seam's own note.
        own = SEAM_OWN.get(name, {})
        for field, why in own.items():
            print("seam's own %s.%s: %s" % (name, field, why))
        for field in bundled:
            if field not in fields and field not in own and field != "_source":
                print("DIFF %s.%s is in the bundled config but not compared" % (name, field))
                bad += 1
    with open(os.path.join(models, "hyena.json")) as f:
        hyena = json.load(f)
    if "HyenaDNA-style" not in hyena.get("_source", ""):
        print("DIFF hyena._source must say it is not a published config")
        bad += 1
    else:
        print("not compared: hyena (not a published config, as its _source says)")
    print("%d field(s) differ" % bad if bad else "all compared fields match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
