"""What the content and campaign clients share (private to :mod:`edgereports.content` and
:mod:`edgereports.campaigns`).

``base`` holds the connection (the base class of both clients), ``validate`` the checks of
their arguments, ``records`` the checks of the records they read and the frames made from them.
"""
