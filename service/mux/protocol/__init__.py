"""Names, error types and message shapes shared by the service and its clients.

Nothing in this package does I/O or imports asyncio or D-Bus libraries, so the
client can import it cheaply and the rules can be tested on their own.
"""
