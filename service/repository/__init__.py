"""The model repository: the models one service serves at once, each with its own engines and queues, loaded,
swapped and unloaded at run time (``repository.py``), where they come from (``sources.py``) and one served
model's parts and lifecycle (``served.py``)."""
