"""What the content and campaign clients share (private to :mod:`edgereports.content` and
:mod:`edgereports.campaigns`).

Both areas of the service are reached at ``base_url`` with the API key in the ``api_key``
header and ``partner_name`` as a query parameter. ``base`` holds that connection (the base
class of both clients), ``validate`` the checks of their arguments, ``records`` the checks of
the records they read and the frames made from them.
"""
