"""The rehearsal of the full profile: its downloads run offline, against stand-ins served on 127.0.0.1.

The full profile reads pinned backbones, SimCSE's data files and OpenWebText from the Hugging Face hub. The
rehearsal runs that code unchanged, with ``HF_ENDPOINT`` pointing at a stand-in hub, so that the hub-facing paths
(pins, revisions, redirects, downloads, checks) are exercised on a machine without network access.

Modules:
    ``hub``       the stand-in hub: an HTTP server of a folder of repos (``python -m sentemb.rehearsal.hub``)
    ``stand_in``  builds that folder: tiny repos under the real ids and pinned revisions

Imports: nothing heavy at import time (transformers, torch, pyarrow load only when a stand-in is built).
"""
