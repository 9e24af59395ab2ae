/* ops/dtype.c: not written yet */
typedef int hop__placeholder_dtype;
