"""How the window looks: light and dark themes, the colours views paint with, fonts and icons."""
