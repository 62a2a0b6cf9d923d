"""Write the retrieval queries that name SimCSE's Table 8 and SimCSE++'s Table 7 records, per training corpus.

A retrieval record is named by its queries, some of which are drawn from the NLI corpus; committing them
(``papers/<paper>/retrieval_queries.json``) lets the cached path find those records without the corpus. Run with the
data reachable (``SENTEMB_DATA``, the shipped ``data/`` folder or the download cache) after changing how the queries
are drawn:

    .venv/bin/python scripts/write_retrieval_queries.py snli_devtest_for_simcse

``tests/test_no_data_reads.py`` checks the committed lists against the data where the data is reachable.
"""

from __future__ import annotations

import argparse
import json

from papers.simcse import analyses as simcse
from papers.simcse_pp import paper as simcse_pp

WRITERS = {simcse.QUERIES_FILE: simcse.queries_from_data, simcse_pp.QUERIES_FILE: simcse_pp.queries_from_data}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", help="NLI corpora whose queries to commit (e.g. snli_devtest_for_simcse)")
    args = parser.parse_args()
    for path, from_data in WRITERS.items():
        listed = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        listed.update({corpus: from_data(corpus) for corpus in args.corpora})
        path.write_text(json.dumps(dict(sorted(listed.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
