"""Development tools, apart from the runtime: run from a checkout with the dev extra, never installed.

Measurements that chose how the service works and may need dev-only dependencies (``compare_segmenters``: Bling
Fire against pySBD). They may import ``service.engine`` and ``service.text``; nothing imports them.
"""
