"""The kernel sandbox: the OS's own confinement around real CPython (Linux namespaces, Landlock,
seccomp and cgroups; macOS Seatbelt). One launcher process per run confines itself and forks a
worker per RLM call (launcher.py here; the fork server is worker/launch.py, inside the worker's
package, which it loads confine.py beside it from).
"""
