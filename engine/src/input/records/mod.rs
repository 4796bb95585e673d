//! Where records begin and end, beyond one delimiter byte: string or front-end boundaries
//! ([`bounds`]), CSV records ([`csv`]), groups of lines by key ([`group`]) and the blank lines
//! `--pipe -r` leaves out ([`blank`]). Each only looks at bytes it is given; none reads input
//! or cuts batches (the scanner does).

pub mod blank;
pub mod bounds;
pub mod csv;
pub mod group;
