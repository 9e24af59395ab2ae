/* ops/sym.c: not written yet */
typedef int hop__placeholder_sym;
