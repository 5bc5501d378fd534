# comment
  __version__ = 'x'
__version__: str = "2.4.0+cu121"
cuda: Optional[str] = '12.1'
