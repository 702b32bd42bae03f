"""The view command: a dataset browsed in the web browser (served on 127.0.0.1 until Ctrl-C), or
written as one static HTML page with --html. The work is tfrecord_lite.viewer's."""

from __future__ import annotations

import argparse

from tfrecord_lite._redact import redact
from tfrecord_lite._repr import plural
from tfrecord_lite.cli.options import PROG, UsageError, add_command, non_negative_int, say


def cmd_view(args: argparse.Namespace) -> int:
    from tfrecord_lite._datasets.messages import load_message_class
    from tfrecord_lite.viewer import Catalog, ViewerServer, write_report

    if (args.proto is None) != (args.message is None):
        raise UsageError("--proto SET.pb and --message pkg.Msg go together")
    message = None if args.proto is None else load_message_class(args.proto, message=args.message)
    on_error = "skip" if args.max_skipped is not None else args.on_error
    catalog = Catalog(args.inputs, message=message, on_error=on_error, max_skipped=args.max_skipped)
    try:
        if args.html:
            say(args, f"{redact(write_report(catalog, args.html, n=args.records))}: {plural(len(catalog), 'record')}")
            return 0
        server = ViewerServer(catalog, args.host, args.port)
        print(f"serving {plural(len(catalog), 'record')} at {server.url} (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0
    finally:
        catalog.close()


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(
        sub,
        "view",
        cmd_view,
        "Browse records in the web browser: an overview, every record by number, an image grid "
        "by label, search. A TensorBoard logdir shows its runs, tags and charts of its scalars; "
        "ELWC records their context and examples; --proto/--message a message of your own. "
        "Serves on 127.0.0.1 until Ctrl-C; --html writes one static page instead.",
        f"  {PROG} view data/ --html report.html\n  {PROG} view train.tfrecord --html first.html --records 10\n"
        f"  {PROG} view logs/ --html runs.html\n"
        f"  {PROG} view orders.tfrecord --proto shop.pb --message shop.Order --html orders.html",
    )
    p.add_argument("inputs", nargs="+", metavar="PATH", help="files, folders, globs or a TensorBoard logdir")
    p.add_argument(
        "--proto",
        metavar="SET.pb",
        help="a FileDescriptorSet (protoc --include_imports --descriptor_set_out=SET.pb) holding --message",
    )
    p.add_argument("--message", metavar="pkg.Msg", help="show records as this message of --proto (its full name)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port to serve on (default: 0, a free one)")
    p.add_argument("--html", metavar="FILE", help="write one self-contained HTML page instead of serving")
    p.add_argument("--records", type=int, default=50, metavar="N", help="records in the --html page (default: 50)")
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="skip",
        help="skip (default here): show the good records and list each damaged span on the overview; "
        "raise: a damaged file stops the command",
    )
    p.add_argument(
        "--max-skipped",
        type=non_negative_int,
        metavar="N",
        help="fail after more than N damaged spans over all the files (implies --on-error skip)",
    )
