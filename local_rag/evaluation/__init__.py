"""MTRAG evaluation: task files, official metrics, Task A runs."""

from __future__ import annotations
