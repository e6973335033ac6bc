// The shared JSON documents move here (see the README's "Where things are").
