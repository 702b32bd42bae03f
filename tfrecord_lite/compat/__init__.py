"""Drop-in stand-ins for other TFRecord packages' APIs, built on the public library.

Strategy: each subpackage mirrors one package's module tree name for name
(`compat.tfrecord` is the `tfrecord` package 1.14.6), so that migrating is one import line:
`import tfrecord_lite.compat.tfrecord as tfrecord`. The values, dtypes and shapes are the
package's; the records under them come from this library's readers and writer, so CRCs are
checked, GZIP is read wherever a path is, and DataLoader workers share records out exactly once.
Nothing here is imported by `import tfrecord_lite`, and nothing imports torch until a `torch`
submodule is used. The guide is docs/from-tfrecord.md.
"""

__all__: list[str] = []  # the drop-ins are subpackages, imported by name: `tfrecord_lite.compat.tfrecord`


def __dir__() -> list[str]:  # dir() shows the API (none here), not the subpackages imported so far
    return sorted(__all__)
