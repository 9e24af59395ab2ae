/* ops/meta.c: not written yet */
typedef int hop__placeholder_meta;
