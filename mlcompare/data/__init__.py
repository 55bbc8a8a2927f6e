"""Data: every array a case trains on, made once per suite and cached.

This room holds the synthetic generators (one registry), the dataset cards of real data
and users' own files, the checksummed downloads, and the Parquet cache every case reads
identical bytes from. It imports nothing else of mlcompare but `errors` and its own
modules: both sides of the process boundary use it.
"""
