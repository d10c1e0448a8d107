"""The CPU a benchmark ran on, as its figures name it."""

import os
import platform


def cpu_name():
    """'AMD EPYC (family 25 model 1, 2 CPUs)': /proc/cpuinfo's model name, family and model."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown CPU"
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')} model "
            f"{fields.get('model', '?')}, {os.cpu_count()} CPUs)")
