//! Dispatch: how batches ([`batch`]) travel from the scanner to the workers and what becomes of
//! them — the lock-free ring of slots ([`ring`]) and one ring per NUMA node ([`rings`]), the
//! ledger of outcomes and retries ([`ledger`]), job slot numbers ([`slots`]) and the pacing of
//! starts ([`pace`]). It reads no input and runs no command.

pub mod batch;
pub mod ledger;
pub mod pace;
pub mod ring;
pub mod rings;
pub mod slots;
