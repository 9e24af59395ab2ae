/* ops/op_table.c: not written yet */
typedef int hop__placeholder_op_table;
