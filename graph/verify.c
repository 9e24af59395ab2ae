/* graph/verify.c: not written yet */
typedef int hop__placeholder_verify;
