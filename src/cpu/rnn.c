/* TODO: kernels of group 'rnn' (being written). */
TI__PRIVATE const ti__op ti__ops_rnn[] = {
    {NULL, NULL, NULL, NULL, 0}
};
