/* graph/print.c: not written yet */
typedef int hop__placeholder_print;
