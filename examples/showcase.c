/* placeholder until the graph layer lands */
int main(void) { return 0; }
