"""mlcompare: the same classical models on CPU and GPU, measured honestly, recorded in MLflow."""

__version__ = "0.1.0"
