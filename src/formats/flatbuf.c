/* TODO(#4): verified FlatBuffers accessors (being written). */
