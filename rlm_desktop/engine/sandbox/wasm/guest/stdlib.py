# ruff: noqa: F401  (each module is imported to be carried into the guest, not used)
"""The standard library model code may import in the WebAssembly sandbox.

A component carries only the modules imported while it is built, so this list is what the
guest has: what RLM trajectories import (the reference's prompts and DSPy's RLM examples), the
rest of the text, data and maths modules, and what those need. Modules that need an operating
system the guest does not have (sockets, processes, threads, ctypes, sqlite3) are left out:
importing one fails with a ModuleNotFoundError that names the sandbox (missing.py).
"""

import abc
import argparse
import array
import ast
import base64
import binascii
import bisect
import calendar
import cmath
import codecs
import collections
import collections.abc
import colorsys
import contextlib
import copy
import csv
import dataclasses
import datetime
import decimal
import difflib
import enum
import errno
import fnmatch
import fractions
import functools
import gettext
import glob
import graphlib
import gzip
import hashlib
import heapq
import hmac
import html
import html.entities
import html.parser
import inspect
import io
import ipaddress
import itertools
import json
import keyword
import linecache
import locale
import math
import mimetypes
import numbers
import operator
import os
import os.path
import pathlib
import pickle
import posixpath
import pprint
import random
import re
import reprlib
import secrets
import shlex
import shutil
import statistics
import string
import struct
import sys
import tempfile
import textwrap
import time
import tokenize
import tomllib
import traceback
import types
import typing
import unicodedata
import urllib.parse
import uuid
import warnings
import weakref
import xml.dom.minidom
import xml.etree.ElementTree
import zipfile
import zlib
