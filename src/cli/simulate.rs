//! `advisor2048 simulate`: to be written (self-play from the command line).
