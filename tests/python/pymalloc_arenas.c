/*
 * tests/python/pymalloc_arenas.c - preloaded by the sanitizer pass's pytest
 * (scripts/dev.sh sanitize, after libasan): CPython's small-object allocator
 * takes its 256 KiB arenas from malloc instead of mmap.
 *
 * The pass runs CPython on pymalloc, not PYTHONMALLOC=malloc, which made
 * every Python object a call into ASan's allocator and the pass twice as
 * slow; hop's own blocks come from malloc either way (python/_C/hop_py.h), so
 * ASan checks them as before.  But LeakSanitizer scans only the stacks, the
 * globals and malloc's blocks for pointers: a hop tensor held by a Python
 * object alive at exit, whose arena was mmap'd, looked leaked.  Arenas from
 * malloc are blocks it scans, reached from pymalloc's table of arenas (itself
 * a malloc block), so what a live object holds is reachable and a block no
 * object holds is still reported.
 *
 * The constructor runs before the interpreter's main and so before its first
 * arena: each arena is freed by the allocator that made it.  The programs the
 * tests start inherit the preload (the C compiler, Graphviz's dot): there
 * the weak reference to CPython's function is NULL and nothing happens.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#pragma weak PyObject_SetArenaAllocator

static void *
arena_alloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void
arena_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    free(ptr);
}

__attribute__((constructor)) static void
arenas_from_malloc(void)
{
    PyObjectArenaAllocator arenas = {NULL, arena_alloc, arena_free};
    if (PyObject_SetArenaAllocator != NULL)
        PyObject_SetArenaAllocator(&arenas);
}
