/* graph/graph.c: not written yet */
typedef int hop__placeholder_graph;
