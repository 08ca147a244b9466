"""Worked examples of porting ackguard's checks to code shaped unlike `impl/`."""
