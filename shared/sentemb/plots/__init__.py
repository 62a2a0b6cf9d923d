"""One figure style (``style``) and the geometry figures shared by the papers (``geometry``)."""
