"""Records as HTML, with no I/O: feature values, image thumbnails and record tables in, an HTML
string out, every key and value escaped (they come from untrusted files). The notebook views
(`TFRecordFile._repr_html_`, `show`), the viewer's pages and its static report are made of these."""
