/* ops/infer.c: not written yet */
typedef int hop__placeholder_infer;
