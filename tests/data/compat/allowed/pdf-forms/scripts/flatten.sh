echo flattened
