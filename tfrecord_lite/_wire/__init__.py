"""The TFRecord framing on bytes: headers, masked CRCs, resynchronisation, content sniffing."""
